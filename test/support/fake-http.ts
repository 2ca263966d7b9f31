// The fake server core lives in dev/fakes/ so the benchmark's fake upstream shares it; tests
// keep importing it from here.
export * from '#dev/fakes/fake-http.js';
