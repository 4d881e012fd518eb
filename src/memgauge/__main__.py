import sys

from memgauge.cli import main

sys.exit(main())
