import sys

from pyhang.cli import main

sys.exit(main())
