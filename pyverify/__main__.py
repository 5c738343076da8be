"""`python -m pyverify`: the same as the `pyverify` command."""

import sys

from pyverify.cli import main

sys.exit(main())
