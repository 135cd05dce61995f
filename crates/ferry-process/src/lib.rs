//! Ferry's processing service: Transloadit-compatible Assemblies. An Assembly is a graph of steps,
//! each run by a robot (`/image/resize`, `/video/encode`, ...), over the files uploaded with it.

pub mod engines;
