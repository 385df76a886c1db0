package abgate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/inputfile"
)

// TestReadRootBoundsFiles: a BFCL result or score file had no size limit
// (a 10 GB file, or one without newlines, was read whole); one over
// inputfile.BFCL is unreadable, named with the limit, and nothing of it
// is read.
func TestReadRootBoundsFiles(t *testing.T) {
	c := mustCategory(t, "multiple")
	root := t.TempDir()
	resultFile, _ := writeCategory(t, root, c, catFiles{})
	// Sparse: the size is there, the disk blocks are not.
	require.NoError(t, os.Truncate(resultFile, inputfile.BFCL.Bytes+1))
	rc, probs := ReadRoot(root, testModel, "a", c, ReadOptions{})
	assert.Nil(t, rc)
	require.Len(t, probs, 1)
	assert.Equal(t, ReasonUnreadable, probs[0].Reason)
	assert.Contains(t, probs[0].Detail, "over sweep's BFCL file limit of 256 MiB")
}
