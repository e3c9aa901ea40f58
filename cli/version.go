package cli

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim/report"
)

// Version is flagshim's release. A release build may set it without
// editing the source:
//
//	go build -ldflags "-X github.com/flagos-ai/flagshim/cli.Version=0.2.0" ./cmd/flagshim
//
// `flagshim version` prints it next to the module version Go recorded in the
// binary (debug.ReadBuildInfo), which is "(devel)" when built from a checkout,
// and the commit where the build recorded one: go build in a git checkout
// stamps it (vcs.revision, "+dirty" when the tree had changes; -buildvcs=false
// leaves it out), and go install ...@<commit> records a pseudo-version that
// carries it. go install ...@v0.2.0 records the version alone.
var Version = "0.2.0-dev"

// modulePath is flagshim's module, looked up in the build information.
const modulePath = "github.com/flagos-ai/flagshim"

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// versionInfo is `flagshim version --json`'s object (docs/json.md): what
// versionLine says, one fact a key.
type versionInfo struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"`                  // flagshim's release (Version)
	Module        string `json:"module"`                   // flagshim's module path
	ModuleVersion string `json:"module_version,omitempty"` // as Go recorded it: "v0.2.0", "(devel)"; "" when unknown
	Commit        string `json:"commit,omitempty"`         // 12 hex digits, where the build recorded one
	Modified      bool   `json:"modified,omitempty"`       // the checkout had changes (the commit's "+dirty")
	Go            string `json:"go"`                       // runtime.Version()
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	// Note says why ModuleVersion is empty ("no build information in the
	// binary"); omitted otherwise.
	Note string `json:"note,omitempty"`
}

// buildVersion gathers versionInfo. It opens nothing and runs no Init.
func buildVersion() versionInfo {
	v := versionInfo{SchemaVersion: report.SchemaVersion, Version: Version, Module: modulePath,
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := readBuildInfo()
	if !ok {
		v.Note = "module version unknown: no build information in the binary"
		return v
	}
	mod := &bi.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod == nil {
		v.Note = "module " + modulePath + " not in the build information"
		return v
	}
	v.ModuleVersion = mod.Version
	if v.ModuleVersion == "" {
		v.ModuleVersion = "(devel)"
	}
	if mod == &bi.Main {
		if rev := setting(bi, "vcs.revision"); rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			v.Commit, v.Modified = rev, setting(bi, "vcs.modified") == "true"
			return v
		}
	}
	// go install ...@<commit> (or a go.mod requiring one) records a
	// pseudo-version, which carries the commit.
	if m := pseudoVersion().FindStringSubmatch(v.ModuleVersion); m != nil {
		v.Commit = m[1]
	}
	return v
}

// versionLine is what `flagshim version` prints:
//
//	flagshim 0.2.0-dev, module github.com/flagos-ai/flagshim (devel), commit 1a2b3c4d5e6f+dirty, go1.26.0 linux/amd64
func versionLine() string {
	v := buildVersion()
	return fmt.Sprintf("flagshim %s, %s, %s %s/%s\n", v.Version, moduleVersion(v), v.Go, v.OS, v.Arch)
}

// moduleVersion says which version of flagshim's module the program was
// built with: the main module's when flagshim is the program's module
// (cmd/flagshim, or `go install ...@v0.2.0`), else the dependency's (a
// program of another module that calls Run), with the commit where Go
// recorded one.
func moduleVersion(v versionInfo) string {
	if v.Note != "" {
		return v.Note
	}
	s := "module " + v.Module + " " + v.ModuleVersion
	if v.Commit != "" {
		s += ", commit " + v.Commit
		if v.Modified {
			s += "+dirty"
		}
	}
	return s
}

// pseudoVersion matches a Go pseudo-version (v0.0.0-20260101120000-
// 0123456789ab, v0.2.1-0.20260101120000-0123456789ab, ...); its group is
// the commit. Compiled on first use: at start-up it cost every command
// 0.3-0.4 ms on the 2-vCPU test machine (GODEBUG=inittrace=1).
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:[0-9A-Za-z.-]*\.)?\d{14}-([0-9a-f]{12})(?:\+[0-9A-Za-z.-]+)?$`)
})

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return strings.TrimSpace(s.Value)
		}
	}
	return ""
}

// writeVersion prints versionLine. It runs no Init: no library is opened.
func writeVersion(w io.Writer) int {
	_, _ = io.WriteString(w, versionLine()) // a failed write is reported by Run
	return exitOK
}
