package musa

import "github.com/flagos-ai/flagshim/visible"

// Visibility is how MUSA reads MUSA_VISIBLE_DEVICES, as far as Moore
// Threads documents it: torch_musa's quick start lists
// "export MUSA_VISIBLE_DEVICES=0,1,2,3 | Driver | 控制当前可见的显卡序号"
// (the driver applies it; it selects the visible cards by index;
// MooreThreads/torch_musa docs/markdown/source/04_quick_start.md). Plain
// lists of indexes are read so (visible.Ordinals); MUSA's runtime is
// closed and nothing public says how it reads anything else (an empty
// value, a repeat, an index past the last device, a UUID), so those are
// undecidable rather than guessed from CUDA's rules. MTML's index order is
// taken to be MUSA's (both number Moore Threads' devices; not confirmed).
var Visibility = &visible.Rules{
	Runtime: "MUSA",
	Stages: []visible.Stage{{
		Vars:    []visible.Var{{Name: VisibleDevicesEnv}},
		Dialect: visible.Ordinals{Source: "Moore Threads (torch_musa's quick start)"},
	}},
}
