// Package plural writes counts in English: "1 arm", "3 arms".
package plural

import "strconv"

// Word returns one when n is 1 and many otherwise.
func Word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count returns n followed by the word for n: Count(1, "arm", "arms") is
// "1 arm", Count(0, "arm", "arms") is "0 arms".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}
