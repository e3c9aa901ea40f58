package main

// main is never called in a c-shared library; -buildmode=c-shared needs it
// to exist.
func main() {}
