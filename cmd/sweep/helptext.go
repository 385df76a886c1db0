package main

import "embed"

// help holds each command's long help, help/<file>.txt for the command
// in <file>.go: prose that users read and writers edit as text, kept out
// of the Go files so that they hold flags, wiring and printing only.
//
//go:embed help/*.txt
var help embed.FS

// helpText is the long help of the command in file.go; a missing file is
// a build mistake (TestEveryCommandHasHelp runs every command's --help).
func helpText(file string) string {
	b, err := help.ReadFile("help/" + file + ".txt")
	if err != nil {
		panic("sweep: no help text " + file + ".txt: " + err.Error())
	}
	return string(b)
}
