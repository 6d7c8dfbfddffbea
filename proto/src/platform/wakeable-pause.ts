/**
 * The pause a poll loop takes between rounds, which `wake()` cuts short: new work ends the wait at once. A wake while
 * no pause runs does nothing; the loop's own state says whether work came meanwhile.
 */
export class WakeablePause {
  private wakeUp?: () => void;

  /** Resolves after `ms`, or at the next `wake()`, whichever comes first. */
  async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
  }

  /** Ends the pause under way, if any. */
  wake(): void {
    this.wakeUp?.();
  }
}
