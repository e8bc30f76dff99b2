package realagents

// replayKimiWeb serves a recorded kimi web session to `aep-hook follow
// kimi-web` (bin, env) and returns the problems seen.
func replayKimiWeb(bin string, env []string, fx Fixture) []string {
	return []string{"kimi-web replay: not built yet"}
}
