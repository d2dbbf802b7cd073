"""The ``mechinit`` command line lives in :mod:`mechinit.cli` (installed under the one import name
``mechinit``, so no ``cli`` module of a user's can shadow it). This file keeps the repository's
layout: ``python cli.py ...`` from the checkout runs the same CLI."""

from mechinit.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
