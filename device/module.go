package device

// Module is a loaded GPU module as hooks see it. drivers/cuda and
// drivers/musa implement it; their module values are pointers, so a Module
// compares by identity and can key the hook registry's state.
type Module interface {
	// Backend is the runtime that loaded the module (CUDA, MUSA).
	Backend() Type
	// Handle is the driver's module handle (CUmodule, MUmodule), for hooks
	// that pass it to vendor libraries.
	Handle() uintptr
	// Label names the module in messages: "add.ptx", "module#3".
	Label() string
	// Global looks up a global variable of the module. ok is false and err
	// nil when the driver says the name is not there (CUDA_ERROR_NOT_FOUND);
	// err is any other failure.
	Global(name string) (addr uintptr, size uint64, ok bool, err error)
}
