"""``python -m qafast``: the ``qafast`` command, for an environment whose scripts are not
on the PATH."""

import sys

from qafast._program import main

sys.exit(main())
