// Pieces every panel uses: keyset pages loaded one after another (the API's nextCursor),
// an error line, a button that copies, and a button that asks before it acts.
import { type QueryKey, useInfiniteQuery } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { describeError } from './api.ts'

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/** Every page loaded so far, and `more()` for the next one. */
export function usePages<T>(key: QueryKey, load: (cursor: string | undefined) => Promise<Page<T>>) {
  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => load(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  })
  const items = query.data?.pages.flatMap((p) => p.items) ?? []
  return {
    items,
    error: query.error,
    loading: query.isPending,
    hasMore: query.hasNextPage,
    loadingMore: query.isFetchingNextPage,
    more: () => query.fetchNextPage(),
  }
}

/** Loads the next page when the sentinel scrolls into view; a button does the same. */
export function MoreButton(props: {
  hasMore: boolean
  loading: boolean
  more(): void
  auto?: boolean
}) {
  const ref = useRef<HTMLButtonElement>(null)
  const { hasMore, loading, more, auto } = props
  useEffect(() => {
    if (!auto || !hasMore || !ref.current || typeof IntersectionObserver === 'undefined') return
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !loading) more()
    })
    observer.observe(ref.current)
    return () => observer.disconnect()
  }, [auto, hasMore, loading, more])
  if (!hasMore) return null
  return (
    <button type="button" ref={ref} onClick={more} disabled={loading} className="more">
      {loading ? 'Loading…' : 'Load more'}
    </button>
  )
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null
  return (
    <p className="error" role="alert">
      {describeError(error)}
    </p>
  )
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true))
      }}
    >
      {done ? 'Copied' : label}
    </button>
  )
}

/** A button that asks "Are you sure?" in place before it acts. */
export function ConfirmButton(props: {
  label: string
  confirm: string
  onConfirm(): void
  danger?: boolean
}) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button
        type="button"
        className={props.danger ? 'danger' : undefined}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    )
  }
  return (
    <span className="confirm">
      <span>{props.confirm}</span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        Yes
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        No
      </button>
    </span>
  )
}

export const formatDate = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—'
