package rwq

// The canonical scripts are a generated, committed copy of the repository's lua/ directory, so
// that the module builds on its own (go get fetches only go/): `make generate` (tools/generate.py)
// writes go/lua/, `make check-generated` fails when it is stale, and so does
// TestEmbeddedScriptsMatchManifest. Never edit go/lua/ by hand.

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua lua/manifest.json
var luaFS embed.FS

// Version is this client's version.
const Version = "0.1.0"

// Protocol is the protocol this package implements.
const Protocol = "RWQ/1"

type manifest struct {
	Protocol string `json:"protocol"`
	Scripts  map[string]struct {
		File string `json:"file"`
		SHA1 string `json:"sha1"`
	} `json:"scripts"`
}

var scripts, declaredNames = loadScripts()

// loadScripts reads the embedded manifest and every script it lists, and checks each script's
// SHA1 against it: a broken copy is a build error, so it panics. It also returns, per script,
// the key names of its header's DECLARED line (profile declared-keys, see parseDeclared).
func loadScripts() (map[string]*redis.Script, map[string][]string) {
	raw, err := luaFS.ReadFile("lua/manifest.json")
	if err != nil {
		panic("rwq: embedded lua/manifest.json missing; run make generate: " + err.Error())
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Protocol != Protocol {
		panic(fmt.Sprintf("rwq: embedded lua/manifest.json is not an %s manifest: %v", Protocol, err))
	}
	out := make(map[string]*redis.Script, len(m.Scripts))
	declared := make(map[string][]string, len(m.Scripts))
	for name, entry := range m.Scripts {
		src, err := luaFS.ReadFile(path.Join("lua", entry.File))
		if err != nil {
			panic("rwq: embedded script missing; run make generate: " + err.Error())
		}
		if sum := sha1.Sum(src); hex.EncodeToString(sum[:]) != entry.SHA1 {
			panic("rwq: embedded " + entry.File + " does not match lua/manifest.json; run make generate")
		}
		out[name] = redis.NewScript(string(src))
		declared[name] = parseDeclared(string(src))
	}
	for _, name := range []string{"add", "lease", "claim", "renew", "complete", "complete_and_lease",
		"release", "counts", "light_clean", "deep_clean", "set_policy", "fail", "dead", "shards", "ring"} {
		if out[name] == nil {
			panic("rwq: embedded manifest lacks script " + name)
		}
	}
	return out, declared
}

// ScriptSHA1s maps each canonical script's name to the SHA1 of the text this package embeds
// (its EVALSHA handle, and its version: SPEC RWQ-VER-003).
func ScriptSHA1s() map[string]string {
	out := make(map[string]string, len(scripts))
	for name, s := range scripts {
		out[name] = s.Hash()
	}
	return out
}
