package launch

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"sweep/internal/selfexe"
	"sweep/internal/usage"
	"sweep/recipes"
)

// SweepDir is where the sweep binary's directory is mounted in the
// container (read-only): the payload runs the same static binary, so no
// image is rebuilt.
const SweepDir = "/opt/sweep"

// PlanFile is the planned point the container's sweep runs, relative to
// the workspace (written by the host after the allocation, when the port
// is known).
const PlanFile = ".sweep-launch/plan.json"

// SweepMount mounts the directory of the sweep binary at SweepDir.
func SweepMount(binary string) string { return filepath.Dir(binary) + ":" + SweepDir + ":ro" }

// SweepPayload is the container command that runs a planned point with the
// mounted sweep: sweep run --plan WS/PlanFile --out WS --force, plus extra
// flags (the client, the simulation). --force: the host has checked the
// output directory (run.ClaimOutDir) before allocating; its only files
// are then the plan's.
func SweepPayload(binary, workspace string, extra ...string) []string {
	argv := []string{path.Join(SweepDir, filepath.Base(binary)), "run", "--plan", path.Join(workspace, PlanFile), "--out", workspace, "--force"}
	return append(argv, extra...)
}

// PlanPoints fills every point's Launch: the host commands that run it
// on runner (whose profile is prof) as `sweep run --launch` does, the
// container running the mounted sweep binary on the planned point;
// workspace is the host directory mounted on the container's workdir
// ("": ${GITHUB_WORKSPACE}).
func PlanPoints(points []recipes.Point, prof recipes.Profile, runner, workspace, binary string) error {
	for i := range points {
		p := &points[i]
		ws := ContainerWorkspace(prof, &p.Row)
		pl, err := Build(prof, &p.Row, Options{RunnerName: runner, Workspace: workspace,
			Payload: SweepPayload(binary, ws), Mounts: []string{SweepMount(binary)}, Export: []string{SweepExport(binary)}})
		if err != nil {
			return fmt.Errorf("%s: %w", p.Row.ConfigKey, err)
		}
		p.Launch = pl.Commands
		p.LaunchNotes = pl.Notes
	}
	return nil
}

// SweepExport names the mounted sweep for the sweep in the container
// (SWEEP_EXECUTABLE): it starts itself for its simulated processes, not
// the binary a host's SWEEP_EXECUTABLE names (srun --export=ALL would
// carry that into the container, where it does not exist).
func SweepExport(binary string) string {
	return selfexe.Env + "=" + path.Join(SweepDir, filepath.Base(binary))
}

// SweepBinary is the sweep a launch mounts into the image (given, else
// this one), as an absolute path to a file; a path that is not a file is
// a usage error naming --sweep-binary.
func SweepBinary(given string) (string, error) {
	bin := given
	if bin == "" {
		var err error
		if bin, err = selfexe.Path(); err != nil {
			return "", err
		}
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return "", usage.Errorf("--sweep-binary %s: not a file", bin)
	}
	return bin, nil
}
