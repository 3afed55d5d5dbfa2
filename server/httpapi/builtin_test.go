package httpapi

// The tests run the built-in model the way a program gets it: by importing
// the package that registers it (the engine itself imports no model).
import _ "github.com/engram-memory/engram/embed/builtin"
