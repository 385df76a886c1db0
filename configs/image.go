package configs

import (
	"fmt"
	"regexp"
)

// imageRef is what an image reference may hold: what a launcher's shell
// text (srun --container-image, docker run, enroot import) carries
// without quoting.
// A # never leads: there the shell would read a comment.
var imageRef = regexp.MustCompile(`^[A-Za-z0-9._/:@+=,-][A-Za-z0-9._/:@+=,#-]*$`)

// CheckImage checks a config's image reference: letters, digits and
// ._/:@+=,#- only (# as in enroot's registry#image), so that no
// launcher's shell text reads a space, quote or $(...) in it as shell.
func CheckImage(image string) error {
	if !imageRef.MatchString(image) {
		return fmt.Errorf("image %q holds characters a launcher's shell text cannot carry: want an image reference of letters, digits and ._/:@+=,#- (e.g. lmsysorg/sglang:v0.5.16-rocm720-mi30x)", image)
	}
	return nil
}
