/* The raw-libavcodec bound of bench/bench_bzna.py: decodes the same HEVC pictures as the
 * Benzina pipelines, straight through libavcodec with nothing else (no container parsing, no
 * colour conversion, no TensorFlow), on all cores, and prints images/s.
 *
 *   bzna_decode_bound SAMPLES MODE THREADS
 *
 * SAMPLES: the Annex-B pictures, each as a little-endian uint32 size and its bytes (the bench
 * writes them with PyAV's hevc_mp4toannexb filter). MODE says how the cores are used:
 *   per-core  THREADS decoders of one thread each, the pictures handed out one at a time
 *             (what tf.data's parallel map over decode_hevc(threads=1) does);
 *   frame     one decoder, THREADS frame threads, the pictures fed as one stream (pictures in
 *             flight on different threads; no drain between pictures);
 *   slice     one decoder, THREADS slice threads (x265's wavefronts), one picture at a time.
 * Each picture is a full decode (every frame is received); the output is one line of JSON with the
 * wall-clock and CPU (user + system, all threads) seconds of the decoding alone.
 * Built by the bench with: cc -O2 bzna_decode_bound.c -lavcodec -lavutil -pthread. */
#include <libavcodec/avcodec.h>
#include <libavutil/log.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
  uint8_t* data; /* padded with AV_INPUT_BUFFER_PADDING_SIZE zero bytes */
  int size;
} Sample;

static Sample* samples;
static int num_samples;
static int next_sample; /* per-core mode: the next picture to hand out */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* CPU seconds (user + system) of every thread of this process so far. */
static double CpuSeconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void Die(const char* what) {
  fprintf(stderr, "bzna_decode_bound: %s\n", what);
  exit(1);
}

static AVCodecContext* Open(int threads, int type) {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
  AVCodecContext* ctx = codec ? avcodec_alloc_context3(codec) : NULL;
  if (!ctx) Die("no HEVC decoder");
  ctx->thread_count = threads;
  ctx->thread_type = type;
  if (avcodec_open2(ctx, codec, NULL) < 0) Die("cannot open the HEVC decoder");
  return ctx;
}

static int Receive(AVCodecContext* ctx, AVFrame* frame) {
  int n = 0;
  while (avcodec_receive_frame(ctx, frame) == 0) {
    ++n;
    av_frame_unref(frame);
  }
  return n;
}

/* One picture on its own: send, drain, flush (the decoder is reused for the next one). */
static int DecodeOne(AVCodecContext* ctx, AVPacket* pkt, AVFrame* frame, const Sample* s) {
  pkt->data = s->data;
  pkt->size = s->size;
  if (avcodec_send_packet(ctx, pkt) < 0) Die("send_packet failed");
  avcodec_send_packet(ctx, NULL);
  const int n = Receive(ctx, frame);
  avcodec_flush_buffers(ctx);
  return n;
}

static void* PerCoreWorker(void* arg) {
  int* decoded = (int*)arg;
  AVCodecContext* ctx = Open(1, FF_THREAD_SLICE);
  AVPacket* pkt = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  for (;;) {
    pthread_mutex_lock(&lock);
    const int i = next_sample++;
    pthread_mutex_unlock(&lock);
    if (i >= num_samples) break;
    *decoded += DecodeOne(ctx, pkt, frame, &samples[i]);
  }
  av_frame_free(&frame);
  av_packet_free(&pkt);
  avcodec_free_context(&ctx);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) Die("usage: bzna_decode_bound SAMPLES per-core|frame|slice THREADS");
  const char* mode = argv[2];
  const int threads = atoi(argv[3]);
  if (threads < 1) Die("THREADS must be >= 1");
  av_log_set_level(AV_LOG_FATAL);
  FILE* f = fopen(argv[1], "rb");
  if (!f) Die("cannot open SAMPLES");
  int cap = 0;
  uint8_t head[4];
  while (fread(head, 1, 4, f) == 4) {
    const int size = head[0] | head[1] << 8 | head[2] << 16 | head[3] << 24;
    if (num_samples == cap) {
      cap = cap ? 2 * cap : 256;
      samples = realloc(samples, cap * sizeof(Sample));
    }
    Sample* s = &samples[num_samples++];
    s->size = size;
    s->data = calloc(1, size + AV_INPUT_BUFFER_PADDING_SIZE);
    if (fread(s->data, 1, size, f) != (size_t)size) Die("SAMPLES is truncated");
  }
  fclose(f);
  if (num_samples == 0) Die("SAMPLES holds no picture");

  int decoded = 0;
  const double start = Now(), cpu_start = CpuSeconds();
  if (strcmp(mode, "per-core") == 0) {
    pthread_t* ids = calloc(threads, sizeof(pthread_t));
    int* counts = calloc(threads, sizeof(int));
    for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, PerCoreWorker, &counts[t]);
    for (int t = 0; t < threads; ++t) {
      pthread_join(ids[t], NULL);
      decoded += counts[t];
    }
  } else if (strcmp(mode, "frame") == 0 || strcmp(mode, "slice") == 0) {
    const int frame_mode = strcmp(mode, "frame") == 0;
    AVCodecContext* ctx = Open(threads, frame_mode ? FF_THREAD_FRAME : FF_THREAD_SLICE);
    AVPacket* pkt = av_packet_alloc();
    AVFrame* frame = av_frame_alloc();
    for (int i = 0; i < num_samples; ++i) {
      if (!frame_mode) {
        decoded += DecodeOne(ctx, pkt, frame, &samples[i]);
        continue;
      }
      pkt->data = samples[i].data;
      pkt->size = samples[i].size;
      int err;
      while ((err = avcodec_send_packet(ctx, pkt)) == AVERROR(EAGAIN)) {
        decoded += Receive(ctx, frame);  /* output first, then the packet goes in */
      }
      if (err < 0) Die("send_packet failed");
      decoded += Receive(ctx, frame);
    }
    if (frame_mode) {
      avcodec_send_packet(ctx, NULL);
      decoded += Receive(ctx, frame);
    }
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&ctx);
  } else {
    Die("MODE must be per-core, frame or slice");
  }
  const double secs = Now() - start, cpu = CpuSeconds() - cpu_start;
  if (decoded != num_samples) {
    fprintf(stderr, "bzna_decode_bound: %d pictures decoded of %d\n", decoded, num_samples);
    return 1;
  }
  printf("{\"mode\": \"%s\", \"threads\": %d, \"images\": %d, \"seconds\": %.6f, "
         "\"cpu_seconds\": %.6f, \"images_per_s\": %.3f}\n", mode, threads, decoded, secs, cpu,
         decoded / secs);
  return 0;
}
