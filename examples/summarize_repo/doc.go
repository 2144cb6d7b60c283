// Command summarize_repo is the worked example of mrtrkit: an MCP
// 2026-07-28 server whose one tool, summarize_repo, summarises a directory
// for an audience with the help of a model, over several rounds of a
// multi round-trip request, without keeping any state on the server.
//
// Run it from the root of the repository:
//
//	go run ./examples/summarize_repo
//
// It serves http://127.0.0.1:8080/mcp and summarises the current
// directory. Flags:
//
//	-dir DIR        directory to summarise (default ".")
//	-addr HOST:PORT address to listen on (default 127.0.0.1:8080)
//	-stdio          serve on stdin and stdout instead, as the subprocess
//	                of a desktop or editor host (package transport/stdio);
//	                logs go to stderr, and the process exits 0 when stdin
//	                closes or on SIGTERM
//	-critique       add a third model round that improves the summary
//	-model-url URL  base URL of an OpenAI-compatible chat-completions API;
//	                the server then calls the model itself
//	-model NAME     model name for -model-url
//	-include-hidden also list and read hidden files and directories and
//	                files named like credentials (withheld by default)
//	-require-keys   refuse to start unless MRTRKIT_STATE_KEYS holds the
//	                requestState key ring
//
// In direct-model mode the API key, if the API needs one, is read from the
// SUMMARIZE_MODEL_API_KEY environment variable; it is never a flag and
// never logged, and with a key -model-url must be https unless its host is
// loopback.
//
// A call goes like this with the client's model (sampling):
//
//  1. The tool lists the directory's text files and answers input_required
//     with a sampling request keyed pick_files: choose three representative
//     files, reply with only a JSON array of paths.
//  2. On the retry the answer is validated (a JSON array of one to three
//     distinct listed paths, nothing else, or -32602), the files are read
//     with per-file and total caps, and a sampling request keyed summary
//     carries their contents.
//  3. The next retry completes with the summary as text and as
//     structuredContent {files, summary}. With -critique a request keyed
//     critique comes first; no call takes more than three model rounds.
//
// The tool is one typed function (package mrtr/typed) that asks in
// straight-line code (model.Sample); it runs again from the top on every
// round, and the framework seals what the call has learned (the chosen
// paths, the listing's digest, the summary) into requestState and checks
// it on every retry. With -model-url the same code goes to the server's
// own model (package mrtr/model/openai) and a call completes in one round.
//
// Every path is validated: clean and relative, outside version-control and
// dependency folders, resolved with filepath.EvalSymlinks to a regular
// text file inside the directory, and opened through an os.Root; the file
// opened must be the file checked (os.SameFile), so that one swapped in
// between is refused; a file with more than one hard link is refused, as
// its other names may lie outside the directory. Unless -include-hidden
// is given, hidden files and directories (names starting with "."),
// files named like credentials (id_rsa, *.pem, *.key, *.ppk, deploy_key,
// kubeconfig, *.tfvars, credentials*, secrets.*, service-account JSON and
// the like) and files whose first bytes hold credentials (a PEM private
// key, a PuTTY key, a service-account key, an AWS secret key, a
// kubeconfig) are withheld: never listed, never read, and a chosen one is
// refused with -32602 naming the rule. A summary is bounded by its size in the sealed
// state, JSON escapes included.
//
// The server has no authenticator: anyone who can reach its port can call
// the tool, and anyone holding a call's requestState can continue it.
// README.md says more under "Who can read what".
//
// README.md walks through a whole call with curl, and shows a host's
// configuration for -stdio and calls through a pipe; TestREADME and
// TestREADMEStdio run those blocks so that they cannot drift from the code.
package main
