//! Engine adapters: the external programs (ffmpeg, ffprobe, libvips, clamd) behind the robots, as plain async functions.
