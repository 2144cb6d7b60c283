package mrtr

import "log/slog"

// Logger returns the logger the Server was given (WithLogger), or
// slog.Default() as it was when the Server was made. The transports and
// the bridge of the initialize era log through it when they are given no
// logger of their own, so that one WithLogger on the Server covers them
// all.
func (s *Server) Logger() *slog.Logger { return s.log }
