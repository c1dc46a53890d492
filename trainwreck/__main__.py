from trainwreck.cli import entry

entry()
