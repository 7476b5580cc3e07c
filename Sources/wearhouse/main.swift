import WearhouseCLI

// The one executable: everything worth testing lives in WearhouseCLI.
WearhouseCLI.exit(await WearhouseCLI.main(Array(CommandLine.arguments.dropFirst())))
