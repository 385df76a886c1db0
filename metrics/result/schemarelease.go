package result

import (
	"strconv"
	"strings"
)

// schemaRelease is the aiperf release a flag schema names
// ("aiperf@0.12.0": "0.12.0"); "" for one that names none (the fork's
// "aiperf@sa-754356e9", whose artifacts' version is not judged).
func schemaRelease(schema string) string {
	v, ok := strings.CutPrefix(schema, "aiperf@")
	if !ok || v == "" {
		return ""
	}
	for part := range strings.SplitSeq(v, ".") {
		if _, err := strconv.Atoi(part); err != nil {
			return ""
		}
	}
	return v
}
