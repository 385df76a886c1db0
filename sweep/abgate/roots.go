package abgate

import (
	"fmt"
	"os"
)

// ArmRoots are the BFCL project roots of one arm (its replicates), under
// the name a message gives the arm (the flag that listed them).
type ArmRoots struct {
	Name  string
	Roots []string
}

// CheckRoots checks that every root is a directory listed once over all
// arms: every replicate needs its own root. Two roots are the same when
// they are the same directory (device and inode), however they are
// written: "./r", "r/", a symbolic link to r.
func CheckRoots(arms ...ArmRoots) error {
	type seenRoot struct {
		arm, root string
		st        os.FileInfo
	}
	var seen []seenRoot
	for _, arm := range arms {
		for _, root := range arm.Roots {
			if root == "" {
				return fmt.Errorf("%s: empty root in the list", arm.Name)
			}
			st, err := os.Stat(root)
			if err != nil || !st.IsDir() {
				return fmt.Errorf("%s: root %s is not a directory: give BFCL_PROJECT_ROOTs (they hold result/ and score/)", arm.Name, root)
			}
			for _, prev := range seen {
				if !os.SameFile(prev.st, st) {
					continue
				}
				same := ""
				if prev.root != root {
					same = fmt.Sprintf(" (%s is %s)", root, prev.root)
				}
				if prev.arm == arm.Name {
					return fmt.Errorf("%s: root %s is listed again%s: every replicate needs its own root", arm.Name, root, same)
				}
				return fmt.Errorf("%s: root %s is already in %s%s: an arm compared with itself always passes; give each arm its own roots", arm.Name, root, prev.arm, same)
			}
			seen = append(seen, seenRoot{arm.Name, root, st})
		}
	}
	return nil
}
