// Package tier names the three ways flagshim answers "is this vendor's
// runtime here, with which devices" (FLAGOS_PROBE), and the answer a tier
// gives without initializing the driver in the calling process (Facts).
//
//	exact     the driver itself, initialized in this process (cuInit, ...)
//	presence  the vendor's management library and device nodes; no driver
//	          is initialized, so a process that forks keeps working children
//	isolated  the exact answer, computed in a child process of flagshim's
//	          own binary, so a driver that crashes or hangs costs a child
//
// Every registered vendor is served by every tier: the driver core answers
// the exact tier from the vendor's description, the presence tier from the
// sources the vendor package names, and the isolated tier from a child that
// runs the exact tier.
//
// # Where each tier lives
//
//	tier                 the names (Exact, Presence, Isolated, Parse) and Facts
//	tier/presence        the presence tier's vendor-neutral parts: Report, Env,
//	                     Query (the management-library flow), device nodes,
//	                     sysfs, visible-devices rules
//	tier/isolated        the isolated tier: the supervisor and its child
//	driver               the core's side: WithPresence, WithFacts,
//	                     Backend.PresenceFacts, Backend.FactsWithoutLoading
//	                     (driver/facts.go, driver/presence.go)
//	flagshim (the root)  the choice per process: tiers.go starts the tier
//	                     and gives each vendor's backend its tier's options
//	drivers/<vendor>     each vendor's presence sources (its management
//	                     library's binding, its device nodes)
package tier
