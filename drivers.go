package flagshim

// driverSteps are the built-in steps of the drivers phase: each registers a
// backend and its original probe. They open nothing: the drivers load their
// libraries on first use.
func (s *shim) driverSteps() []step {
	return nil
}
