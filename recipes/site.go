package recipes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SiteKeys are the settings ApplySite changes, for help texts.
var SiteKeys = []string{"partition", "account", "cpus-per-task", "time", "exclude", "exclusive", "mem-all", "squash-dir", "hub-cache", "devices", "aiperf-cache", "docker-flags"}

// ApplySite changes one site fact of the profile, key=value, for a
// cluster laid out differently from InferenceX's (another partition, a
// squash directory of one's own, no /dev/kfd): partition, account,
// cpus-per-task, time (minutes), exclude, exclusive and mem-all (true or
// false), squash-dir, hub-cache (the host's Hugging Face hub cache),
// aiperf-cache (the host's aiperf mmap cache), devices=none (drop the
// device mounts), docker-flags=none (drop the docker launcher's flags
// beyond --rm --network=host --name: --privileged, --ipc=host, --ulimit,
// --cap-add ..., for a host that cannot grant them).
func (p *Profile) ApplySite(setting string) error {
	key, value, ok := strings.Cut(setting, "=")
	if !ok {
		return fmt.Errorf("--site %q: want key=value with key one of %s", setting, strings.Join(SiteKeys, ", "))
	}
	num := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--site %s: want a whole number, got %q", key, value)
		}
		return n, nil
	}
	flag := func() (bool, error) {
		b, err := strconv.ParseBool(value)
		if err != nil {
			return false, fmt.Errorf("--site %s: want true or false, got %q", key, value)
		}
		return b, nil
	}
	var err error
	switch key {
	case "partition":
		p.Slurm.Partition = value
	case "account":
		p.Slurm.Account = value
	case "exclude":
		p.Slurm.Exclude = value
	case "cpus-per-task":
		p.Slurm.CPUsPerTask, err = num()
	case "time":
		p.Slurm.TimeMinutes, err = num()
	case "exclusive":
		p.Slurm.Exclusive, err = flag()
	case "mem-all":
		p.Slurm.MemAll, err = flag()
	case "squash-dir":
		if !strings.HasPrefix(value, "/") {
			return fmt.Errorf("--site squash-dir=%s: want an absolute path", value)
		}
		// The launcher's enroot paths under the squash directory
		// (MI300X's TMPDIR) move with it.
		if old := strings.TrimSuffix(p.Launch.SquashDir, "/"); old != "" {
			for i, l := range p.Launch.ImportPreamble {
				p.Launch.ImportPreamble[i] = strings.ReplaceAll(l, old, strings.TrimSuffix(value, "/"))
			}
			p.Launch.StageTmpDir = strings.ReplaceAll(p.Launch.StageTmpDir, old, strings.TrimSuffix(value, "/"))
		}
		p.Launch.SquashDir = value
	case "hub-cache":
		if err := CheckMountPath("--site hub-cache", value); err != nil {
			return err
		}
		p.Launch.HubCacheMount = fixedHub(value)
		if _, ok := p.Launch.HostEnv["HF_HUB_CACHE_MOUNT"]; ok {
			p.Launch.HostEnv["HF_HUB_CACHE_MOUNT"] = value
		}
		for i, m := range p.Mounts {
			if m.Container == "$HF_HUB_CACHE" || m.Host == "$HF_HUB_CACHE_MOUNT" {
				p.Mounts[i].Host = "$HF_HUB_CACHE_MOUNT"
			}
		}
	case "aiperf-cache":
		if err := CheckMountPath("--site aiperf-cache", value); err != nil {
			return err
		}
		for i, m := range p.Mounts {
			if m.Container == "/aiperf_mmap_cache" {
				p.Mounts[i].Host = value
			}
		}
		for _, env := range []map[string]string{p.Env, p.Launch.HostEnv} {
			if _, ok := env["AIPERF_MMAP_CACHE_HOST_PATH"]; ok {
				env["AIPERF_MMAP_CACHE_HOST_PATH"] = value
			}
		}
	case "devices":
		if value != "none" {
			return fmt.Errorf("--site devices=%s: only devices=none (drop the device mounts) is supported", value)
		}
		p.Mounts = slices.DeleteFunc(p.Mounts, func(m Mount) bool { return strings.HasPrefix(m.Host, "/dev/") })
		if p.Launch.Docker != nil {
			p.Launch.Docker.Devices = nil
			p.Launch.Docker.GPUs = false
		}
	case "docker-flags":
		if value != "none" {
			return fmt.Errorf("--site docker-flags=%s: only docker-flags=none (drop the launcher's extra docker run flags) is supported", value)
		}
		if p.Launch.Docker != nil {
			p.Launch.Docker.Flags = nil
		}
	default:
		return fmt.Errorf("--site %q: unknown key %q (known: %s)", setting, key, strings.Join(SiteKeys, ", "))
	}
	return err
}

// CheckMountPath checks a host directory that becomes a container mount
// (a Pyxis --container-mounts entry, a docker -v): an absolute path
// without ',' or ':', which would end the entry and start another mount
// or the mount's flags. what names the flag or key for the error.
func CheckMountPath(what, path string) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("%s=%s: want an absolute path", what, path)
	}
	if strings.ContainsAny(path, ",:") {
		return fmt.Errorf("%s=%s: a mounted path cannot hold ',' or ':' (they separate container mounts and a mount's host:container:flags); use a path without them, e.g. a symlink to that directory", what, path)
	}
	return nil
}

// SiteProfile is the runner's profile (ProfileFor: an unknown runner is
// ErrNoProfile) with the site changes (key=value, ApplySite) applied in
// order.
func SiteProfile(runner string, site []string) (Profile, error) {
	prof, err := ProfileFor(runner)
	if err != nil {
		return prof, err
	}
	for _, s := range site {
		if err := prof.ApplySite(s); err != nil {
			return prof, err
		}
	}
	return prof, nil
}
