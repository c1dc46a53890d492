import sys

from trainwreck.cli import main

sys.exit(main())
