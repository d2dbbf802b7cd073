from mechinit.cli import main

if __name__ == "__main__":  # not under a spawned sweep worker, which imports this module as __mp_main__
    raise SystemExit(main())
