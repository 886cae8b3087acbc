from modelplane.cli import main

main()
