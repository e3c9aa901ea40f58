// Package devicetest is a whole accelerator in pure Go for the tests of
// programs that use flagshim, as go-nvml's mock is a whole NVIDIA machine:
// devices with properties, device memory, modules whose kernels are Go
// functions, streams, events, pinned host buffers and graphs (a stream's
// work recorded and replayed), with the errors of a real backend (the
// device package's sentinels) and module hooks applied as the drivers apply
// them. It needs no GPU, no driver library and no C compiler.
//
//	fake := devicetest.New(devicetest.Config{Type: "acme", Devices: []devicetest.Device{{Name: "Acme 1"}, {Name: "Acme 2"}}})
//	image := fake.AddModule("scale", devicetest.Module{Kernels: map[string]devicetest.Kernel{
//		"double": func(l *devicetest.Launch) error {
//			buf, err := l.Bytes(l.Args[0].(device.Ptr), 4)
//			...
//		},
//	}})
//	devs := device.NewRegistry()
//	devs.Register(fake)
//
// Register it in a device.Registry of the test's own (or in
// device.Default from a flagshim.AddStep of the drivers phase, with
// FLAGOS_BACKEND naming its type, to stand behind flagos and the cuda
// alias). Work queued on a Stream runs when the stream, an event recorded on
// it or the device is synchronized, so a test that reads a result before
// synchronizing sees stale memory, as on a GPU.
package devicetest
