"""``python -m qafast``: the ``qafast`` command, for an environment whose scripts are not
on the PATH."""

if __name__ == "__main__":  # not when a tool imports every module (the docs' doctests)
    import sys

    from qafast._program import main

    sys.exit(main())
