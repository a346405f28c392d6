"""The application layer: one typed Options in per command, a Result (or a plan and a Writer) out.

``cli`` maps its flags onto these Options and calls one function; nothing here knows argparse.
"""
