"""``python -m chartscore`` runs the command-line tool (as the ``chartscore`` script does)."""

from chartscore.cli import run

if __name__ == "__main__":
    run()
