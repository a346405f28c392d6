from gpulabel.cli.main import run

run()
