package simengine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/recipes"
)

// EnvMooncakeConfig names the Mooncake store's config file, as vLLM's
// MooncakeStoreConnector reads it (the point's sidecar writes it before
// the engine starts: recipes.Mooncake).
const EnvMooncakeConfig = "MOONCAKE_CONFIG_PATH"

// The store config's rules are vLLM's MooncakeStoreConfig
// (vllm-project/vllm vllm/distributed/mooncake_store.py at 07d682b5ff0a:
// from_file, __post_init__, _parse_size; the same in 46ee37fd00d6 and in
// vllm/distributed/kv_transfer/kv_connector/v1/mooncake/store/worker.py at
// 003df2961dd8) and what Mooncake's store setup does with the values vLLM
// passes it (kvcache-ai/Mooncake mooncake-store/src/real_client.cpp
// RealClient::setup_internal and mooncake-integration/store/store_py.cpp
// "setup" at 3b5a594133958449): a key left out takes vLLM's default, a
// value vLLM or Mooncake refuses fails the engine's start.
const (
	// mooncakeDefaultSegment is vLLM's DEFAULT_GLOBAL_SEGMENT_SIZE, the
	// segment each worker mounts when the file has no
	// global_segment_size.
	mooncakeDefaultSegment = 4 << 30
	// mooncakeDefaultBuffer is vLLM's DEFAULT_LOCAL_BUFFER_SIZE.
	mooncakeDefaultBuffer = 4 << 30
)

// mooncakeFile is what vLLM's MooncakeStoreConfig.from_file reads of the
// store's config (other keys it passes over, as vLLM does). A key left
// out is empty; a JSON null is "null".
type mooncakeFile struct {
	Mode     json.RawMessage `json:"mode"`
	Segment  json.RawMessage `json:"global_segment_size"`
	Buffer   json.RawMessage `json:"local_buffer_size"`
	Master   json.RawMessage `json:"master_server_address"`
	Metadata json.RawMessage `json:"metadata_server"`
	Protocol json.RawMessage `json:"protocol"`
	Device   json.RawMessage `json:"device_name"`
}

// mooncakeWant ends every message about the file's contents.
const mooncakeWant = `want the Mooncake store's config as vLLM's MooncakeStoreConnector reads it: a JSON object with mode "embedded", global_segment_size and local_buffer_size (bytes, or a string such as "87GB"), master_server_address, metadata_server, protocol and device_name`

// mooncakeTier sizes the host tier of vLLM's MooncakeStoreConnector from
// the store's config file at path (MOONCAKE_CONFIG_PATH): the
// global_segment_size each worker mounts in embedded mode, and the
// tier's description for the engine's log, which names the file and
// whether each size is the file's or vLLM's default. The file is read
// from files (the point's sidecar files, not yet written:
// CommandLine.Files) when one of them is at path, else from the disk.
//
// As the real connector: the variable unset, a path naming no file or a
// file that is no JSON object fails the engine's start; so does a size
// vLLM's _parse_size refuses (a JSON null, list or object: TypeError; a
// string other than digits and a dot with an optional B, KB, MB or GB
// suffix, 1,024-based: ValueError), a size Mooncake's setup refuses (a
// negative segment, any size beyond 2^64 - 1: its size_t argument), a
// zero segment in embedded mode or a local_buffer_size of 0 or less
// (MooncakeStoreConfig's ValueError), a mode other than "embedded" and "standalone-store", and a
// master_server_address left out or empty (vLLM passes "" to Mooncake,
// which connects to no master) or not a string, as metadata_server,
// protocol and device_name not strings (Mooncake's setup takes
// std::string: TypeError). A JSON number with a fraction is truncated to
// whole bytes, as Python's int() does. Deliberately stricter than vLLM:
// true and false, which Python takes as 1 and 0 bytes, are refused; and
// standalone-store mode (an external mooncake_client holds the store,
// the workers mount nothing) is refused because the simulated engine
// does not model that process. Not read: the values of metadata_server,
// protocol and device_name (whether Mooncake can reach or use them).
// Every problem is reported, each a *configs.Error at its value's line
// and column.
func mooncakeTier(path string, files []recipes.File) (bytesPerWorker float64, source string, err error) {
	if path == "" {
		return 0, "", fmt.Errorf("%s is not set: vLLM's MooncakeStoreConnector reads the Mooncake store's config (its global_segment_size sizes the host KV tier) from the file it names, and does not start without it; set it to the store's config (a planned point's sidecar writes it: recipes.Mooncake)", EnvMooncakeConfig)
	}
	var data []byte
	if i := slices.IndexFunc(files, func(f recipes.File) bool { return filepath.Clean(f.Path) == filepath.Clean(path) }); i >= 0 {
		data = []byte(files[i].Content)
	} else {
		data, err = os.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", fmt.Errorf("%s=%s: no such file: vLLM's MooncakeStoreConnector reads the Mooncake store's config (its global_segment_size sizes the host KV tier) there; write the point's sidecar files (sweep run writes them into the point's result directory before the engine starts) or point %s at the store's config", EnvMooncakeConfig, path, EnvMooncakeConfig)
	}
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", EnvMooncakeConfig, err)
	}
	var f mooncakeFile
	if err := configs.DecodeRecordJSON(path, data, &f, mooncakeWant); err != nil {
		return 0, "", fmt.Errorf("%s: %w", EnvMooncakeConfig, err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		// DecodeRecordJSON takes a top-level null for an empty object;
		// vLLM's config.get fails on it.
		return 0, "", fmt.Errorf("%s: %w", EnvMooncakeConfig, &configs.Error{File: path, Line: 1, Col: 1, Msg: "not a JSON object: vLLM's MooncakeStoreConfig.from_file fails on it; " + mooncakeWant})
	}
	var errs []error
	at := func(key, format string, args ...any) error {
		return configs.JSONValueErrorf(path, data, []any{key}, key, format, args...)
	}
	mode := "embedded"
	if len(f.Mode) > 0 {
		if m, ok := mooncakeString(f.Mode); ok && (m == "embedded" || m == "standalone-store") {
			mode = m
		} else {
			errs = append(errs, at("mode", `%s: vLLM's MooncakeStoreConfig raises ValueError (unknown Mooncake mode); want "embedded" (each worker mounts its global_segment_size) or leave the key out`, f.Mode))
			mode = ""
		}
	}
	segment, segErr := mooncakeSize(f.Segment, mooncakeDefaultSegment)
	if segErr != nil {
		errs = append(errs, at("global_segment_size", "%s: %v", f.Segment, segErr))
	}
	buffer, bufErr := mooncakeSize(f.Buffer, mooncakeDefaultBuffer)
	if bufErr != nil {
		errs = append(errs, at("local_buffer_size", "%s: %v", f.Buffer, bufErr))
	} else if buffer <= 0 {
		errs = append(errs, at("local_buffer_size", `%s: vLLM's MooncakeStoreConfig raises ValueError (local_buffer_size must be > 0): it is each worker's transfer buffer; give its size (recipes.Mooncake writes "4GB") or leave the key out for vLLM's default of 4 GiB`, f.Buffer))
	}
	switch {
	case segErr != nil:
	case segment < 0:
		errs = append(errs, at("global_segment_size", "%s: negative: vLLM passes it to Mooncake's store setup, whose size_t argument refuses it (TypeError), so the engine does not start; give the segment each worker mounts, such as \"87GB\", or leave the key out for vLLM's default of 4 GiB", f.Segment))
	case mode == "embedded" && segment == 0:
		errs = append(errs, at("global_segment_size", `%s: vLLM's MooncakeStoreConfig raises ValueError (embedded mode requires global_segment_size > 0); give the segment each worker mounts, such as "87GB", or leave the key out for vLLM's default of 4 GiB`, f.Segment))
	case mode == "standalone-store" && segment != 0:
		errs = append(errs, at("global_segment_size", `%s in standalone-store mode: vLLM's MooncakeStoreConfig raises ValueError (standalone-store mode requires global_segment_size == 0, and its default is 4 GiB); use mode "embedded"`, cmp.Or(string(f.Segment), "left out")))
	case mode == "standalone-store":
		errs = append(errs, at("mode", `"standalone-store": the workers mount no memory and an external mooncake_client process holds the store, which the simulated engine does not model; use mode "embedded" with the global_segment_size each worker mounts (sweep's recipes do: recipes.Mooncake)`))
	}
	switch s, ok := mooncakeString(f.Master); {
	case !ok:
		errs = append(errs, at("master_server_address", "%s: vLLM passes it to Mooncake's store setup, which takes a string only (TypeError), so the engine does not start; give the mooncake_master's host:port (recipes.Mooncake writes 127.0.0.1:<port+12000>)", f.Master))
	case s == "":
		errs = append(errs, at("master_server_address", `%s: vLLM passes "" to Mooncake's store setup, which connects to no master, so the engine does not start; give the mooncake_master's host:port (recipes.Mooncake writes 127.0.0.1:<port+12000>)`, cmp.Or(string(f.Master), "left out")))
	}
	for _, k := range []struct {
		name string
		raw  json.RawMessage
	}{{"metadata_server", f.Metadata}, {"protocol", f.Protocol}, {"device_name", f.Device}} {
		if _, ok := mooncakeString(k.raw); !ok {
			errs = append(errs, at(k.name, `%s: vLLM passes it to Mooncake's store setup, which takes a string only (TypeError), so the engine does not start; want a string (recipes.Mooncake writes "P2PHANDSHAKE", "rdma" and the RDMA device)`, k.raw))
		}
	}
	if len(errs) > 0 {
		return 0, "", fmt.Errorf("%s: %w", EnvMooncakeConfig, errors.Join(errs...))
	}
	return segment, fmt.Sprintf("Mooncake store (%s): global_segment_size %.4g GiB per worker (%s), local_buffer_size %.4g GiB (%s; a transfer buffer, not storage), one store, each KV shard once",
		path, segment/(1<<30), mooncakeFrom(f.Segment), buffer/(1<<30), mooncakeFrom(f.Buffer)), nil
}

// mooncakeFrom says where a size of the file came from, for the
// engine's log: the file, or vLLM's default when raw is left out.
func mooncakeFrom(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "vLLM's default, not in the file"
	}
	return "the file's"
}

// mooncakeString reads a string value that vLLM passes to Mooncake's
// setup as is; ok is false for a value of another type (a key left out
// is "").
func mooncakeString(raw json.RawMessage) (s string, ok bool) {
	if len(raw) == 0 {
		return "", true
	}
	return s, json.Unmarshal(raw, &s) == nil && string(raw) != "null"
}

// mooncakeSizeString is what vLLM's _parse_size accepts of a string,
// after trimming it and lowering its case.
var mooncakeSizeString = regexp.MustCompile(`^([0-9.]+)\s*(gb|mb|kb|b)?$`)

// mooncakeSize reads a size of the store's config as vLLM's _parse_size
// does, in whole bytes (negative for a negative JSON number), def when
// the key is left out; see mooncakeTier for what it refuses.
func mooncakeSize(raw json.RawMessage, def float64) (float64, error) {
	const want = `want a whole number of bytes or a string such as "87GB" (B, KB, MB or GB, 1,024-based), or leave the key out for vLLM's default of 4 GiB`
	if len(raw) == 0 {
		return def, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return 0, err
	}
	var f float64 // the size, when it is not a whole number literal
	switch v := v.(type) {
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return float64(n), nil
			}
		}
		f, _ = strconv.ParseFloat(string(v), 64)
		f = math.Trunc(f) // Python's int() of a float
	case string:
		m := mooncakeSizeString.FindStringSubmatch(strings.ToLower(strings.TrimSpace(v)))
		switch {
		case strings.TrimSpace(v) == "":
			return 0, errors.New("an empty string: vLLM's _parse_size raises ValueError (Size cannot be empty); " + want)
		case m == nil:
			return 0, errors.New("vLLM's _parse_size raises ValueError (Invalid format): it takes digits and a dot with an optional B, KB, MB or GB suffix, no TB, GiB, exponent or sign; " + want)
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, errors.New("vLLM's _parse_size raises ValueError (Invalid numeric value); " + want)
		}
		unit := map[string]float64{"gb": 1 << 30, "mb": 1 << 20, "kb": 1 << 10, "b": 1, "": 1}[m[2]]
		f = math.Trunc(n * unit)
	case bool:
		return 0, errors.New("true and false are no size (vLLM's _parse_size takes them as the integers 1 and 0, Python's bool being an int: a 1-byte segment or none); " + want)
	default: // null, a list, an object
		return 0, errors.New("vLLM's _parse_size raises TypeError (Unsupported type for size); " + want)
	}
	if f >= 1<<64 {
		return 0, errors.New("beyond 2^64 - 1 bytes: Mooncake's store setup takes a size_t and refuses it (TypeError), so the engine does not start; " + want)
	}
	return f, nil
}
