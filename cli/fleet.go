package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/fleet/cdi"
	"github.com/flagos-ai/flagshim/fleet/labels"
	"github.com/flagos-ai/flagshim/tier"
)

// exitStale is cdi check's status when the spec differs from the machine
// now (and --refresh was not given).
const exitStale = 3

var cdiCommand = &command{
	name: "cdi", args: "generate | check FILE",
	summary: "Container Device Interface specs of the devices here: write them, or check one",
	detail: `CDI specs (the CNCF Container Device Interface, read by containerd, CRI-O,
podman and Docker) for the devices flagshim finds, one spec per vendor.

  flagshim cdi generate [--all] [--format yaml|json] [--output PATH] [--probe TIER]
  flagshim cdi check [--refresh] [--probe TIER] FILE

A spec's kind is flagos.ai/<type> (flagos.ai/cuda); its devices are named
by visible index (0), by UUID and "all", so that a container asks for
--device flagos.ai/cuda=0. Each device brings its device nodes and the
vendor's visible-devices variable naming it by UUID; the spec brings the
vendor's control nodes (each vendor's own, where present) and the driver and management
libraries (each real file and its soname links, read-only at the same path).
The cdiVersion is the lowest that expresses the spec. docs/kubernetes.md
shows a DaemonSet that keeps /etc/cdi current.

generate writes the spec of each vendor whose devices are here (every
registered vendor with --all), to stdout (YAML documents separated by ---,
or one JSON object after another) or to --output: a file (one spec), or a
folder, which gets one file per spec, named as CDI's tools name them
(flagos.ai-cuda.yaml). A file is written atomically: a temporary file in
the same folder, renamed over the old one, which an error leaves as it was.
What could not be written (a device whose node is not known, ...) is said on
stderr.

check compares the spec in FILE with the machine now and prints one line
per difference (a library's path or version, device nodes added or gone,
the device count, UUIDs); it exits ` + fmt.Sprint(exitStale) + ` when there is any, 0 when the
spec is current. With --refresh it rewrites FILE (atomically, in its
format) when it is stale, says what changed and exits 0; a current file is
not touched. A FILE that is not CDI, whose kind is not flagos.ai/<type> of a
known type, or whose device names CDI does not allow is an error (exit 1),
and FILE is left as it was.

Like list, both answer from the presence tier by default (management
libraries and device nodes, no driver initialized), asking an isolated child
where those show nothing.

flags:
  --all              generate: every registered vendor, not only those with devices
  --format F         generate: yaml (the default, or json when --output ends in .json)
  --output PATH      generate: a file, or a folder for one file per spec
  --refresh          check: rewrite FILE when it is stale
` + probeHelp,
	probes: true,
	run:    runCDI,
}

var labelsCommand = &command{
	name: "labels", args: "[--probe TIER]",
	summary: "Kubernetes node labels for Node Feature Discovery (a features.d file)",
	detail: `The node's labels as a Node Feature Discovery local feature file: one
"flagos.ai/<name>=<value>" per line, which nfd-worker reads from
/etc/kubernetes/node-feature-discovery/features.d/ and publishes as the
node's labels:

  flagos.ai/vendor                 whose accelerators: NVIDIA, mixed, none, ...
  flagos.ai/<type>.count           devices of each available vendor backend
  flagos.ai/<type>.model           their model (mixed when they differ)
  flagos.ai/<type>.driver-version  the driver's version
  flagos.ai/<type>.vendor          whose runtime answered (another maker's, behind CUDA's API)
  flagos.ai/<type>.tier            the probe tier that answered for it
  flagos.ai/flagos.routes-to       the vendor backend flagos routes to
  flagos.ai/cuda-aliased           true when cuda is aliased to flagos
  flagos.ai/tier                   the probe tier that answered

Names and values keep to Kubernetes' rules (at most 63 characters of
letters, digits, '.', '_' and '-', starting and ending with a letter or
digit): a model name "NVIDIA H100 80GB HBM3" is NVIDIA-H100-80GB-HBM3.
docs/kubernetes.md writes the file from a DaemonSet. Like list, it answers
from the presence tier by default.

flags:
` + probeHelp,
	probes: true,
	run:    runLabels,
}

// presenceByDefault is list's default: the presence tier, with an isolated
// child for a vendor whose library is there but shows nothing, where
// neither --probe nor FLAGOS_PROBE chooses.
func (s *session) presenceByDefault() {
	if v, _ := lookupEnv(flagshim.EnvProbe); s.probeTier == "" && strings.TrimSpace(v) == "" {
		s.defaultTier = tier.Presence
		s.opts = append(s.opts, flagshim.WithDefaultProbe(tier.Presence), flagshim.WithIsolatedFallback())
	}
	s.showsEveryBackend()
}

// parseInterleaved is parseFlags for a command whose flags may also follow
// its arguments ("check FILE --refresh").
func parseInterleaved(s *session, c *command, fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	for {
		more, code, ok := parseFlags(s, c, fs, args)
		if !ok {
			return nil, code, false
		}
		if len(more) == 0 || more[0] == "--" {
			if len(more) > 0 {
				rest = append(rest, more[1:]...)
			}
			return rest, exitOK, true
		}
		rest = append(rest, more[0])
		args = more[1:]
	}
}

func runCDI(s *session, c *command, args []string) int {
	if len(args) == 0 {
		return usageError(s.stderr, c, "cdi needs a subcommand: generate or check")
	}
	switch args[0] {
	case "generate":
		return cdiGenerate(s, c, args[1:])
	case "check":
		return cdiCheck(s, c, args[1:])
	}
	return usageError(s.stderr, c, fmt.Sprintf("cdi: unknown subcommand %q: want generate or check", args[0]))
}

// cdiOptions is where the machine is read: FLAGOS_TEST_ROOT (checked by
// Init) or /.
func cdiOptions() cdi.Options {
	root, _ := lookupEnv(flagshim.EnvTestRoot)
	return cdi.Options{Root: root, LookupEnv: lookupEnv}
}

// vendorBackends are the registered driver-core backends, in registry
// order.
func vendorBackends() []*driver.Backend {
	var out []*driver.Backend
	for _, b := range device.Default.Backends() {
		if db, ok := b.(*driver.Backend); ok {
			out = append(out, db)
		}
	}
	return out
}

func cdiGenerate(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	all := fs.Bool("all", false, "")
	format := fs.String("format", "", "")
	output := fs.String("output", "", "")
	probeFlag(fs)
	rest, code, ok := parseInterleaved(s, c, fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(s.stderr, c, fmt.Sprintf("cdi generate takes no arguments, got %q", rest))
	}
	f := cdi.YAML
	if *format != "" {
		var err error
		if f, err = cdi.ParseFormat(*format); err != nil {
			return usageError(s.stderr, c, "cdi generate: --"+err.Error())
		}
	} else if strings.HasSuffix(*output, ".json") {
		f = cdi.JSON
	}
	dir := false
	if *output != "" {
		if st, err := os.Stat(*output); err == nil && st.IsDir() {
			dir = true
		}
	}
	if code, ok := useProbe(s, c); !ok {
		return code
	}
	s.presenceByDefault()
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	var specs []*cdi.Spec
	var errs []error
	for _, b := range vendorBackends() {
		if !*all && !b.Available().Available {
			continue
		}
		spec, notes, err := cdi.Generate(cdi.FromBackend(b), cdiOptions())
		for _, n := range notes {
			fmt.Fprintf(s.stderr, "%s%s\n", prefix, escape(n))
		}
		switch {
		case err != nil && *all && errors.Is(err, cdi.ErrNothing):
			fmt.Fprintf(s.stderr, "%s%s: no spec\n", prefix, escape(err.Error())) // --all: a vendor that is not here
		case err != nil:
			errs = append(errs, err)
		default:
			specs = append(specs, spec)
		}
	}
	if len(specs) == 0 {
		errs = append(errs, fmt.Errorf("cdi generate: no vendor's devices are here, so there is no spec to write (`flagshim explain` says what was tried; --all writes every registered vendor's)"))
		return fail(s.stderr, errors.Join(errs...))
	}
	if *output != "" && !dir && len(specs) > 1 {
		errs = append(errs, fmt.Errorf("cdi generate: %d specs (%s) and --output %s is a file: give a folder (/etc/cdi) for one file per spec", len(specs), kinds(specs), *output))
		return fail(s.stderr, errors.Join(errs...))
	}
	var out []byte
	for i, spec := range specs {
		data, err := cdi.Encode(spec, f)
		if err != nil {
			return fail(s.stderr, err)
		}
		switch {
		case dir:
			if err := cdi.WriteFile(filepath.Join(*output, cdi.FileName(spec.Kind, f)), data); err != nil {
				errs = append(errs, err)
			}
		case *output != "":
			if err := cdi.WriteFile(*output, data); err != nil {
				errs = append(errs, err)
			}
		default:
			if i > 0 && f == cdi.YAML {
				out = append(out, "---\n"...)
			}
			out = append(out, data...)
		}
	}
	var outErr error
	if len(out) > 0 {
		_, outErr = s.stdout.Write(out)
	}
	return s.done(outErr, errors.Join(errs...))
}

func kinds(specs []*cdi.Spec) string {
	var ks []string
	for _, s := range specs {
		ks = append(ks, s.Kind)
	}
	return strings.Join(ks, ", ")
}

func cdiCheck(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	refresh := fs.Bool("refresh", false, "")
	probeFlag(fs)
	rest, code, ok := parseInterleaved(s, c, fs, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		return usageError(s.stderr, c, fmt.Sprintf("cdi check takes one FILE, got %q", rest))
	}
	file := rest[0]
	// The file is read and judged before anything is probed: bad input
	// costs nothing and changes nothing.
	data, err := readBounded(file, cdi.MaxSize)
	if err != nil {
		return fail(s.stderr, fmt.Errorf("cdi check: %w", err))
	}
	old, err := cdi.Parse(data)
	if err != nil {
		return fail(s.stderr, fmt.Errorf("cdi check: %s: %w", file, err))
	}
	t, err := cdi.TypeOf(old.Kind)
	if err != nil {
		return fail(s.stderr, fmt.Errorf("cdi check: %s: %w", file, err))
	}
	if code, ok := useProbe(s, c); !ok {
		return code
	}
	s.presenceByDefault()
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	var be *driver.Backend
	var known []string
	for _, b := range vendorBackends() {
		known = append(known, string(b.Type()))
		if string(b.Type()) == t {
			be = b
		}
	}
	if be == nil {
		return fail(s.stderr, fmt.Errorf("cdi check: %s: %w: kind %s names the device type %q, which no registered vendor has (known: %s)",
			file, cdi.ErrBadKind, old.Kind, t, strings.Join(known, ", ")))
	}
	now, notes, genErr := cdi.Generate(cdi.FromBackend(be), cdiOptions())
	for _, n := range notes {
		fmt.Fprintf(s.stderr, "%s%s\n", prefix, escape(n))
	}
	if genErr != nil {
		// Nothing can be injected now: every device of the spec is gone.
		fmt.Fprintf(s.stdout, "%s: %v\n", escape(file), genErr)
		return exitStale
	}
	diffs := cdi.Diff(old, now)
	if len(diffs) == 0 {
		return exitOK
	}
	var b strings.Builder
	for _, d := range diffs {
		b.WriteString(escape(file) + ": " + escape(d) + "\n")
	}
	if !*refresh {
		_, _ = s.stdout.Write([]byte(b.String()))
		return s.staleOrFailed()
	}
	newData, err := cdi.Encode(now, cdi.FormatOf(data))
	if err == nil {
		err = cdi.WriteFile(file, newData)
	}
	if err != nil {
		_, _ = s.stdout.Write([]byte(b.String()))
		return fail(s.stderr, fmt.Errorf("cdi check --refresh: %w", err))
	}
	fmt.Fprintf(&b, "%s: refreshed (%d difference(s))\n", escape(file), len(diffs))
	_, _ = s.stdout.Write([]byte(b.String()))
	return s.done(nil, nil)
}

// staleOrFailed is exitStale, or the error status where stdout could not
// be written (Run reports that).
func (s *session) staleOrFailed() int {
	if s.stdout.err != nil {
		return exitError
	}
	return exitStale
}

// readBounded reads at most max bytes of file; a longer file is an error.
func readBounded(file string, max int) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, 0, 64<<10)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > max {
			return nil, fmt.Errorf("%s: more than %d bytes: not a spec", file, max)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return data, nil
			}
			return nil, err
		}
	}
}

func runLabels(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	args, code, ok := probeFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	s.presenceByDefault()
	rep, initErr, bad := s.initialise()
	if bad != nil {
		return fail(s.stderr, bad)
	}
	if rep == nil {
		return fail(s.stderr, initErr)
	}
	info := s.collect(rep, false, nil, nil)
	return s.done(labels.Write(s.stdout, labels.FromReport(info)), nil)
}
