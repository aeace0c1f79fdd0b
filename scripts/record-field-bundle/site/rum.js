// What a RUM snippet does: profile with the JS Self-Profiling API beside a
// PerformanceObserver for long tasks and long animation frames, then send both.
const longTasks = [], loafs = [];
new PerformanceObserver(l => longTasks.push(...l.getEntries().map(e => e.toJSON()))).observe({type: 'longtask', buffered: true});
new PerformanceObserver(l => loafs.push(...l.getEntries().map(e => e.toJSON()))).observe({type: 'long-animation-frame', buffered: true});
const profiler = new Profiler({sampleInterval: 10, maxBufferSize: 10000});
window.collect = async () => {
  const profile = await profiler.stop();
  return {profile, longTasks, longAnimationFrames: loafs, timeOrigin: performance.timeOrigin, page: location.href, userAgent: navigator.userAgent};
};
