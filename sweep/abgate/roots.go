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
// arms: every replicate needs its own root.
func CheckRoots(arms ...ArmRoots) error {
	seen := map[string]string{}
	for _, arm := range arms {
		for _, root := range arm.Roots {
			if root == "" {
				return fmt.Errorf("%s: empty root in the list", arm.Name)
			}
			if prev, dup := seen[root]; dup {
				return fmt.Errorf("%s: root %s is listed again (already in %s): every replicate needs its own root", arm.Name, root, prev)
			}
			seen[root] = arm.Name
			if st, err := os.Stat(root); err != nil || !st.IsDir() {
				return fmt.Errorf("%s: root %s is not a directory: give BFCL_PROJECT_ROOTs (they hold result/ and score/)", arm.Name, root)
			}
		}
	}
	return nil
}
