package flagshim

import (
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/onecpu"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/isolated"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The probe tiers (FLAGOS_PROBE, package tier) meet here: Init selects one
// (settings.go reads it), starts the isolated tier's supervisor where it is
// needed (startTier), and gives each vendor's backend the options of that
// tier (tierOptions). What each tier does lives in its own package:
// tier (the names, and Facts: what a tier answers), tier/presence (the
// presence tier's sources), tier/isolated (the supervisor and its child),
// and the driver core's side (driver.WithPresence, driver.WithFacts,
// Backend.FactsWithoutLoading). docs/architecture.md, "Probe tiers", has
// the picture.

// ErrProbeChild is wrapped by Init's error when the isolated tier could
// not start a probe child at all (the program's binary cannot be executed,
// no process can be created): a fault of the program, not a fact of the
// machine. Each vendor is then "not available" with the same reason.
var ErrProbeChild = isolated.ErrStart

// ServeProbeChild makes this program its own isolated probe child
// (FLAGOS_PROBE=isolated re-executes the running binary to probe each
// vendor in a process of its own). Call it first in main, before anything
// the program would not want done twice: when the process was started as a
// child by flagshim's supervisor (a token in FLAGSHIM_PROBE_CHILD that
// matches the request on the pipe the supervisor passed), it probes the
// one vendor asked, writes the answer and exits; otherwise it returns at
// once. A program that never calls it cannot use the isolated tier: Init
// then reports every vendor "not available" and returns an error wrapping
// ErrProbeChild. cli.Run calls it.
//
// The variable alone never makes a process a child: a FLAGSHIM_PROBE_CHILD
// inherited by any other process is removed and ignored, and the C shared
// library never serves.
func ServeProbeChild() { isolated.Serve() }

// WaitProbeChildren waits until every isolated probe child this process
// started has exited and been reaped, at most timeout, and returns how many
// are still running. Init returns as soon as each child has answered,
// while the child is still tearing its driver down (about 55 ms after
// cuInit on an H200); a program that exits right after Init and does not
// want a child to outlive it (the CLI) calls this last.
func WaitProbeChildren(timeout time.Duration) int { return isolated.Wait(timeout) }

// startTier prepares the selected tier before the drivers phase: the
// isolated tier's supervisor (for FLAGOS_PROBE=isolated, and behind the
// presence tier when WithIsolatedFallback asks for it), or, for the exact
// tier of a process that asked WithOneCPU, the pin to one CPU.
func (s *shim) startTier(set settings, trace *zap.Logger) {
	if set.tier == tier.Isolated || (set.tier == tier.Presence && s.cfg.isoBehind && !s.cfg.noChildren) {
		s.iso = isolated.New(isolated.Config{Timeout: set.timeout, Log: s.log, Memory: s.cfg.freeMemory, NoShutdown: s.cfg.noShutdown, Exe: s.cfg.childExe, Trace: trace})
	} else if s.cfg.oneCPU && set.tier == tier.Exact {
		cpu, err := onecpu.Pin()
		s.log.Debug("one CPU", zap.Int("cpu", cpu), zap.Error(err))
	}
}

// tierOptions are the options of the selected probe tier for vendor v's
// backend; base are its other options (a backend built with them alone,
// never loaded, tells whether the isolated tier needs a child at all).
//
//	exact     none: the backend initializes its driver when first asked;
//	          with WithFreeMemory, driver.WithManagementMemory: records
//	          carry the management library's free memory and reserve
//	presence  driver.WithPresence: the vendor's presence sources; with a
//	          supervisor behind it (WithIsolatedFallback), a vendor whose
//	          sources see no device but whose library is there is asked
//	          of an isolated child instead
//	isolated  driver.WithFacts: each vendor's exact answer from a child
func (s *shim) tierOptions(v *driver.Vendor, base []driver.Option) []driver.Option {
	var opts []driver.Option
	// The isolated tier's children: none for a vendor whose answer needs no
	// code of its library (none found, or no device node), which a backend
	// of the vendor's own, never loaded, tells (FactsWithoutLoading).
	var dry func() (tier.Facts, bool)
	if s.iso != nil {
		dry = driver.New(v, base...).FactsWithoutLoading
	}
	lookup := func(k string) (string, bool) {
		val := s.getenv(k)
		if val == "" {
			return os.LookupEnv(k) // "set but empty" matters for CUDA_VISIBLE_DEVICES
		}
		return val, true
	}
	popts := []presence.Option{presence.WithLookupEnv(lookup), presence.WithLogger(s.log), presence.WithRoot(s.set.root)}
	if s.cfg.noShutdown {
		popts = append(popts, presence.WithoutShutdown())
	}
	switch s.set.tier {
	case tier.Exact:
		if s.cfg.freeMemory {
			opts = append(opts, driver.WithManagementMemory(presence.NewEnv(popts...)))
		}
	case tier.Presence:
		env := presence.NewEnv(popts...)
		if s.iso == nil {
			opts = append(opts, driver.WithPresence(env))
			break
		}
		child := s.iso.Facts(v.Type, dry) // WithIsolatedFallback
		opts = append(opts, driver.WithFacts(func(b *driver.Backend) tier.Facts {
			f := b.PresenceFacts(env)
			if lib := b.FindLibrary(); f.Result.Available || lib.Err != nil || lib.NoDevice != "" {
				return f // presence sees the devices, or a child would find none: no library, or no device node
			}
			return child(b)
		}))
	case tier.Isolated:
		opts = append(opts, driver.WithFacts(s.iso.Facts(v.Type, dry)))
	}
	return opts
}
