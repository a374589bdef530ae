from harness.entry import main

main()
