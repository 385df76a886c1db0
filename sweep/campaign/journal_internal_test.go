package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/inputfile"
)

// fullDisk writes the first half of what it is given to w and fails with
// ENOSPC, as a write that runs out of space part-way does.
type fullDisk struct{ w io.Writer }

func (d fullDisk) Write(p []byte) (int, error) {
	n, _ := d.w.Write(p[:len(p)/2])
	return n, fmt.Errorf("write: %w", syscall.ENOSPC)
}

// TestJournalAppendAfterFullDisk: a record cut short by ENOSPC had the
// next append glued onto it once space returned, and every later resume
// failed "unreadable journal record". The cut record is removed before
// the next append.
func TestJournalAppendAfterFullDisk(t *testing.T) {
	dir := t.TempDir()
	j, _, err := OpenJournal(dir)
	require.NoError(t, err)
	require.NoError(t, j.Append(Record{Event: EventSweepStart}))
	j.w = fullDisk{j.f}
	require.ErrorIs(t, j.Append(Record{Event: EventPointStart, Point: "p1"}), syscall.ENOSPC)
	j.w = j.f // space again
	require.NoError(t, j.Append(Record{Event: EventPointEnd, Point: "p0", Status: StatusOK}))
	require.NoError(t, j.Close())

	recs, err := ReadJournal(dir)
	require.NoError(t, err)
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
	}
	assert.Equal(t, []string{EventSweepStart, EventPointEnd}, events)
	_, recs, err = OpenJournal(dir)
	require.NoError(t, err, "resume reads the journal")
	assert.Len(t, recs, 2)
}

// TestJournalReadsAGluedRecord: a journal an older sweep left with a cut
// record and the next one on the same line still reads, without the cut
// record.
func TestJournalReadsAGluedRecord(t *testing.T) {
	line := func(r Record) string {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		return string(data)
	}
	cut := line(Record{Event: EventPointStart, Point: "p1"})
	data := line(Record{Event: EventSweepStart}) + "\n" + cut[:len(cut)/2] + line(Record{Event: EventPointEnd, Point: "p0"}) + "\n" +
		line(Record{Event: EventSweepEnd}) + "\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, JournalFile), []byte(data), 0o644))
	recs, err := ReadJournal(dir)
	require.NoError(t, err)
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
	}
	assert.Equal(t, []string{EventSweepStart, EventPointEnd, EventSweepEnd}, events)

	// Garbage is still an error naming its line.
	require.NoError(t, os.WriteFile(filepath.Join(dir, JournalFile), []byte(line(Record{Event: EventSweepStart})+"\ngarbage\n{}\n"), 0o644))
	_, err = ReadJournal(dir)
	assert.ErrorContains(t, err, JournalFile+":2: unreadable journal record")
}

// TestJournalBounded: resume (OpenJournal) and --cost-from (ReadJournal)
// read a journal whole, with no size limit; one over inputfile.Journal is
// refused before any of it is read, and left as it is.
func TestJournalBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, JournalFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"event":"sweep_start"}`+"\n"), 0o644))
	require.NoError(t, os.Truncate(path, 256<<20+1)) // sparse
	_, _, err := OpenJournal(dir)
	_, tooLarge := errors.AsType[*inputfile.TooLargeError](err)
	assert.True(t, tooLarge, "%v", err)
	_, err = ReadJournal(dir)
	_, tooLarge = errors.AsType[*inputfile.TooLargeError](err)
	assert.True(t, tooLarge, "%v", err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(256<<20+1), st.Size(), "the journal is left as it is")
}
