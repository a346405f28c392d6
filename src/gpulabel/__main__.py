from gpulabel.cli import run

run()
