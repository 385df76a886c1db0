package main

import (
	"github.com/spf13/pflag"

	"sweep/sweep/point"
)

// bindKVOffloading binds --kv-offloading, the KV offloading mode (none or
// dram, a search space's kv-offloading) that picks among a key's rows of
// one layout and concurrency: sweep run's point, sweep plan's points. what
// says what the flag does in the command.
func bindKVOffloading(fs *pflag.FlagSet, kv *string, what string) {
	fs.StringVar(kv, "kv-offloading", "", "KV offloading, none or dram: "+what)
}

// checkKVOffloading refuses a --kv-offloading that is no KV offloading
// mode (point.CheckKVOffloading), exit 2.
func checkKVOffloading(kv string) error {
	if err := point.CheckKVOffloading(kv); err != nil {
		return flagErrorf("%v", err)
	}
	return nil
}
