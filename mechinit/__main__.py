from mechinit.cli import main

raise SystemExit(main())
