package main

import "strings"

func wrapFlags(flags []string) string {
	var b strings.Builder
	line := 0
	for _, f := range flags {
		if line+len(f)+1 > 78 {
			b.WriteString("\n")
			line = 0
		}
		if line > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(f)
		line += len(f)
	}
	return b.String()
}
