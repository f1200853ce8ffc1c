/**
 * A "Resend the code" button: disabled, saying how long is left, through the service's resend
 * spacing, then enabled. The email code step and the MFA step's sent code (email, SMS) share it,
 * so both count down alike; the service enforces the same spacing either way.
 */
import { t } from './i18n.js';
import { $ } from './page.js';

/** The resend spacing in force, from the page's meta tag (the service's SERVICE_IDP_SEND_SPACING_SECONDS). */
export const resendSeconds = (): number =>
  Number(document.querySelector<HTMLMetaElement>('meta[name="service-sign-in"]')?.dataset.resendSeconds) || 30;

export interface ResendCountdown {
  /** Disables the button for `seconds` with a visible countdown, then enables it. */
  wait(seconds: number): void;
  /** Stops counting (the step was left). */
  stop(): void;
}

export function resendCountdown(buttonId: string): ResendCountdown {
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  return {
    stop,
    wait(seconds) {
      const button = $<HTMLButtonElement>(buttonId);
      stop();
      let left = seconds;
      const tick = () => {
        if (left <= 0) {
          stop();
          button.disabled = false;
          button.textContent = t('hosted.otp.resend');
          return;
        }
        button.disabled = true;
        button.textContent = t('hosted.otp.resendIn', { seconds: left });
        left -= 1;
      };
      tick();
      timer = setInterval(tick, 1000);
    },
  };
}
