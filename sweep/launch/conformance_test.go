package launch

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
)

// launcherSample is one point of testdata/launch/launcher-argv-sample.json:
// what launch_mi325x-amds.sh ran with every program stubbed.
type launcherSample struct {
	Runner     string          `json:"runner"`
	RunnerName string          `json:"runner_name"`
	ConfigKey  string          `json:"config_key"`
	Row        json.RawMessage `json:"row"`
	Calls      []struct {
		Program string            `json:"program"`
		Role    string            `json:"role"`
		Argv    []string          `json:"argv"`
		Env     map[string]string `json:"env"`
	} `json:"calls"`
	RecipeScript string `json:"recipe_script"`
}

// TestLauncherArgvSample: Build gives launch_mi325x-amds.sh's host commands
// (argv and the launcher's exported variables) for every recorded point.
// The launcher's EXIT trap scancels a second time; sweep releases once.
func TestLauncherArgvSample(t *testing.T) {
	data, err := os.ReadFile("../../testdata/launch/launcher-argv-sample.json")
	require.NoError(t, err)
	var samples []launcherSample
	require.NoError(t, json.Unmarshal(data, &samples))
	require.Len(t, samples, 4)
	roles := map[string]string{"allocate": RoleAllocate, "image-import": RoleImport, "container-run": RoleRun, "release": RoleRelease}
	for _, s := range samples {
		var row matrix.Row
		require.NoError(t, json.Unmarshal(s.Row, &row), s.ConfigKey)
		prof, err := recipes.ProfileFor(s.Runner)
		require.NoError(t, err)
		pl, err := Build(prof, &row, Options{RunnerName: s.RunnerName})
		require.NoError(t, err, s.ConfigKey)
		script, err := RecipeScript(prof, &row)
		require.NoError(t, err)
		assert.Equal(t, s.RecipeScript, script, s.ConfigKey)

		calls := s.Calls
		n := len(calls)
		require.Equal(t, calls[n-1].Argv, calls[n-2].Argv, "the sample ends with the trap's second scancel")
		calls = calls[:n-1]
		require.Len(t, pl.Commands, len(calls), s.ConfigKey)
		assert.Equal(t, "40000 + JOB_ID % 10000", pl.Derived["PORT"])
		bound := pl.Bind(map[string]string{"PORT": calls[len(calls)-1].Env["PORT"]})
		for i, c := range calls {
			got := bound.Commands[i]
			assert.Equal(t, roles[c.Role], got.Role, "%s call %d", s.ConfigKey, i)
			assert.Equal(t, c.Argv, got.Argv, "%s call %d (%s)", s.ConfigKey, i, c.Role)
			// The recording's environment had none of the workflow's
			// variables; sweep exports its HF_HUB_CACHE as the workflow does.
			want := maps.Clone(c.Env)
			want["HF_HUB_CACHE"] = DefaultHubCache
			assert.Equal(t, want, got.Env, "%s call %d (%s) env", s.ConfigKey, i, c.Role)
		}
	}
}

func TestPortOf(t *testing.T) {
	assert.Equal(t, "43456", PortOf(recipes.PortFromJobID, "123456", "mi325x-amds_00"))
	assert.Equal(t, "40007", PortOf(recipes.PortFromJobID, "7", ""))
	assert.Equal(t, Port, PortOf(recipes.PortFromJobID, JobID, ""))
	assert.Equal(t, "8891", PortOf(recipes.PortFromRunnerDigit, "", "mi355x-amds_03"))
	assert.Equal(t, Port, PortOf(recipes.PortFromRunnerDigit, "", "mi355x-amds"))
	assert.Equal(t, "8888", PortOf(recipes.PortFixed, "5", "h200-dgxc-slurm_1"))
}

// recordedSet is testdata/launch/launcher-argv-set.json: one point per
// single-node runner profile, what its launcher ran with every external
// program stubbed (record-launchers.py).
type recordedSet struct {
	Runner     string          `json:"runner"`
	RunnerName string          `json:"runner_name"`
	ConfigKey  string          `json:"config_key"`
	Row        json.RawMessage `json:"row"`
	ExitStatus int             `json:"exit_status"`
	JobID      string          `json:"job_id"`
	Calls      []struct {
		Program string            `json:"program"`
		Argv    []string          `json:"argv"`
		Env     map[string]string `json:"env"`
	} `json:"calls"`
}

// scriptLines are a shell script's lines without their indentation (the
// launchers indent their heredocs differently).
func scriptLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// Differences from the launchers that sweep makes on purpose, by runner
// and variable or role.
var (
	// Variables a launcher exports that no single-node step reads.
	unusedExports = map[string]string{
		"PORT_OFFSET":            "mi355x-amds: the runner digit PORT is derived from (PORT is exported)",
		"SRT_SLURM_MODEL_PREFIX": "b200-dgxc: the multi-node srt-slurm model alias",
	}
)

// TestLauncherArgvSet: for each of the 7 single-node runner profiles, Build
// gives what runners/launch_<name>.sh at 843c6254f ran (recorded with every
// program stubbed): the allocation and the job id read-back, the image
// import (its script, or on B300 the host's flock/unsquashfs/enroot calls),
// the container step's argv and the variables the launcher exported for it,
// MI300X's staging, MI355X's docker stop, and the release.
func TestLauncherArgvSet(t *testing.T) {
	data, err := os.ReadFile("../../testdata/launch/launcher-argv-set.json")
	require.NoError(t, err)
	var set []recordedSet
	require.NoError(t, json.Unmarshal(data, &set))
	var runners []string
	for _, s := range set {
		runners = append(runners, s.Runner)
	}
	assert.ElementsMatch(t, []string{"mi300x-amds", "mi325x-amds", "mi355x-amds", "b300-nv", "b200-dgxc", "h200-dgxc-slurm", "h100-dgxc-slurm"}, runners)
	for _, s := range set {
		t.Run(s.Runner, func(t *testing.T) {
			require.Equal(t, 0, s.ExitStatus)
			var row matrix.Row
			require.NoError(t, json.Unmarshal(s.Row, &row))
			prof, err := recipes.ProfileFor(s.RunnerName)
			require.NoError(t, err)
			pl, err := Build(prof, &row, Options{RunnerName: s.RunnerName, User: "root"})
			require.NoError(t, err)
			// The recording ran as root (uid 0) with job id 123456.
			bound := pl.Bind(map[string]string{"JOB_ID": s.JobID, "UID": "0", "HOME": "${HOME}"})
			byRole := map[string][]recipes.HostCommand{}
			for _, c := range bound.Commands {
				byRole[c.Role] = append(byRole[c.Role], c)
			}
			// checkEnv: the launcher's exports reach the command with the
			// same values; on the container step (what reaches the engine)
			// sweep exports nothing else. An earlier command may see a
			// variable sweep exports before the launcher gets to it.
			checkEnv := func(what string, want map[string]string, got map[string]string, exact bool) {
				t.Helper()
				for k, v := range want {
					if _, ok := unusedExports[k]; ok || strings.HasPrefix(k, "ENROOT_") {
						continue // ENROOT_*: the import script's own exports (checked below)
					}
					assert.Equal(t, v, got[k], "%s: %s", what, k)
				}
				for k, v := range got {
					if _, ok := want[k]; !ok && exact {
						// The workflow already sets GPU_COUNT to the point's
						// GPUs (the launcher's export changes nothing) and
						// HF_HUB_CACHE to the hub cache mount, which the
						// recording's environment did not.
						assert.Contains(t, []string{"GPU_COUNT", "HF_HUB_CACHE"}, k, "%s: sweep exports %s=%s, the launcher does not", what, k, v)
						if k == "HF_HUB_CACHE" {
							assert.Equal(t, DefaultHubCache, v, "%s: the workflow's HF_HUB_CACHE", what)
						}
					}
				}
			}
			var srunScripts []string
			releases := 0
			for _, c := range s.Calls {
				argv := c.Argv
				switch {
				case c.Program == "salloc":
					require.Len(t, byRole[RoleAllocate], 1)
					assert.Equal(t, argv, byRole[RoleAllocate][0].Argv, "salloc")
					checkEnv("salloc", c.Env, byRole[RoleAllocate][0].Env, false)
				case c.Program == "squeue":
					require.Len(t, byRole[RoleJobID], 1)
					if prof.Launch.JobID == recipes.JobIDFromSqueue {
						// sweep's one deviation: only this user's jobs,
						// never another user's job of the same name.
						argv = slices.Insert(slices.Clone(argv), 2, "-u", "root")
					}
					assert.Equal(t, argv, byRole[RoleJobID][0].Argv, "squeue")
				case c.Program == "srun" && slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, "--container-image=") }):
					require.Len(t, byRole[RoleRun], 1)
					assert.Equal(t, argv, byRole[RoleRun][0].Argv, "container step")
					checkEnv("container step", c.Env, byRole[RoleRun][0].Env, true)
				case c.Program == "srun":
					srunScripts = append(srunScripts, argv[len(argv)-1])
				case c.Program == "scancel":
					releases++
					assert.Equal(t, bound.Commands[len(bound.Commands)-1].Argv, argv, "release")
				}
			}
			// The import: srun bash -c SCRIPT in the allocation, or (B300)
			// the script's programs run on the host before it.
			require.Len(t, byRole[RoleImport], 1)
			imp := byRole[RoleImport][0]
			script := imp.Argv[len(imp.Argv)-1]
			if prof.Launch.ImportOnHost {
				assert.Equal(t, []string{"bash", "-c"}, imp.Argv[:2])
				for _, c := range s.Calls {
					switch c.Program {
					case "flock", "unsquashfs", "enroot":
						assert.Contains(t, script, strings.Join(quoteSquash(c.Argv, pl.SquashFile), " "), "host import")
						for k := range c.Env {
							if strings.HasPrefix(k, "ENROOT_") {
								assert.Contains(t, script, "export "+k+"=", "host import")
							}
						}
					}
				}
			} else {
				assert.Contains(t, srunScripts, findScript(srunScripts, "enroot import"), "no recorded import")
				assert.Equal(t, scriptLines(findScript(srunScripts, "enroot import")), scriptLines(script), "import script")
				assert.Equal(t, imp.Argv[:len(imp.Argv)-1], recordedHead(s, "enroot import"), "import step")
			}
			if prof.Launch.StopDocker {
				assert.Equal(t, "docker stop $(docker ps -a -q)", findScript(srunScripts, "docker stop"))
				assert.Equal(t, "docker stop $(docker ps -a -q)", byRole[RolePrepare][0].Argv[len(byRole[RolePrepare][0].Argv)-1])
			}
			if prof.Launch.StageWorkspace {
				stage := byRole[RoleStage]
				require.Len(t, stage, 3)
				local := "/tmp/inferencex-" + s.JobID + ".XXXXXX.tar.gz" // the launcher's mktemp; sweep's name is fixed
				assert.Equal(t, recordedArgv(s, "tar"), replaceArg(stage[0].Argv, "/tmp/inferencex-"+s.JobID+".local.tar.gz", local))
				assert.Equal(t, recordedArgv(s, "sbcast"), replaceArg(stage[1].Argv, "/tmp/inferencex-"+s.JobID+".local.tar.gz", local))
				assert.Equal(t, scriptLines(findScript(srunScripts, "xzf")), scriptLines(stage[2].Argv[len(stage[2].Argv)-1]), "stage script")
				assert.Equal(t, findScript(srunScripts, "rm -rf '/tmp/inferencex-"), byRole[RoleRelease][0].Argv[len(byRole[RoleRelease][0].Argv)-1], "node cleanup")
			}
			// The launchers that scancel do it twice (the EXIT trap); B200
			// and B300 leave it to the workflow, sweep releases anyway.
			if prof.Launch.Release {
				assert.Positive(t, releases)
			} else {
				assert.Zero(t, releases)
			}
			assert.Equal(t, []string{"scancel", s.JobID}, bound.Commands[len(bound.Commands)-1].Argv)
		})
	}
}

func findScript(scripts []string, holding string) string {
	for _, s := range scripts {
		if strings.Contains(s, holding) && (!strings.HasPrefix(holding, "rm -rf") || strings.HasPrefix(s, holding)) {
			return s
		}
	}
	return ""
}

// recordedArgv is the argv of the first recorded call of program.
func recordedArgv(s recordedSet, program string) []string {
	for _, c := range s.Calls {
		if c.Program == program {
			return c.Argv
		}
	}
	return nil
}

// recordedHead is the recorded srun call running a script holding the
// text, without the script.
func recordedHead(s recordedSet, holding string) []string {
	for _, c := range s.Calls {
		if c.Program == "srun" && strings.Contains(c.Argv[len(c.Argv)-1], holding) {
			return c.Argv[:len(c.Argv)-1]
		}
	}
	return nil
}

func replaceArg(argv []string, from, to string) []string {
	out := slices.Clone(argv)
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], from, to)
	}
	return out
}

// quoteSquash writes a recorded host call as the import script spells it
// (the squash file in double quotes).
func quoteSquash(argv []string, squash string) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if a == squash {
			out[i] = `"` + squash + `"`
		}
	}
	return out
}
