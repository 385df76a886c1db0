package power

import "testing"

func TestParseGPUFilter(t *testing.T) {
	ids, err := ParseGPUFilter("all")
	if err != nil || ids != nil {
		t.Fatalf("all: %v, %v", ids, err)
	}
	ids, err = ParseGPUFilter("0, 1,2")
	if err != nil || len(ids) != 3 || ids[1] != "1" {
		t.Fatalf("0, 1,2: %q, %v", ids, err)
	}
	if _, err := ParseGPUFilter("0,,1"); err == nil {
		t.Fatal("an empty id is refused")
	}
}
