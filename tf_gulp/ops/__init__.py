"""TensorFlow glue: op registrations (C++), kernels and their Python wrappers."""
