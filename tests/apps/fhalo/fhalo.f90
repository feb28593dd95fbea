! fhalo: 1-D halo exchange in Fortran 90 (use mpi). Each rank owns a block of a 1-D rod;
! every iteration it exchanges one ghost cell with each neighbour (MPI_ISEND/MPI_IRECV/
! MPI_WAITALL, MPI_PROC_NULL at the ends), relaxes its cells, and every `interval` iterations
! an MPI_ALLREDUCE sums the residual. Like the C apps it counts its own MPI calls and writes
! $LLAMP_APP_COUNTS_DIR/counts-<rank>.json with the C names (MPICH's Fortran bindings call the
! C functions, so a tracer sees MPI_Isend, not MPI_ISEND).
!
! usage: app_fhalo [iterations] [cells per rank] [work per cell] [residual interval]

module app_counts
  implicit none
  private
  public :: count_call, write_counts, read_arg

  integer, parameter :: max_names = 32, name_len = 32
  character(len=name_len) :: names(max_names)
  integer :: counts(max_names)
  integer :: used = 0

contains

  ! Count one call of the MPI function with C name `name`.
  subroutine count_call(name)
    character(len=*), intent(in) :: name
    integer :: i
    do i = 1, used
      if (names(i) == name) then
        counts(i) = counts(i) + 1
        return
      end if
    end do
    if (used == max_names) stop 'app_counts: too many distinct MPI functions'
    used = used + 1
    names(used) = name
    counts(used) = 1
  end subroutine count_call

  ! Write {"MPI_X": n, ...} sorted by name; returns status 0 on success or when the
  ! variable is unset, 1 when the file cannot be written.
  subroutine write_counts(rank, status)
    integer, intent(in) :: rank
    integer, intent(out) :: status
    character(len=4096) :: dir
    character(len=4200) :: path
    character(len=name_len) :: sorted(max_names), swap_name
    integer :: sorted_counts(max_names), swap_count, i, j, unit, length, env_status, io

    status = 0
    call get_environment_variable('LLAMP_APP_COUNTS_DIR', dir, length, env_status)
    if (env_status /= 0 .or. length == 0) return
    if (length > len(dir)) then
      write (0, '(a)') 'app_counts: LLAMP_APP_COUNTS_DIR is too long'
      status = 1
      return
    end if
    sorted(1:used) = names(1:used)
    sorted_counts(1:used) = counts(1:used)
    do i = 2, used  ! insertion sort: a few dozen names at most
      j = i
      do while (j > 1)
        if (llt(sorted(j), sorted(j - 1))) then
          swap_name = sorted(j); sorted(j) = sorted(j - 1); sorted(j - 1) = swap_name
          swap_count = sorted_counts(j); sorted_counts(j) = sorted_counts(j - 1)
          sorted_counts(j - 1) = swap_count
          j = j - 1
        else
          exit
        end if
      end do
    end do

    write (path, '(a,a,i0,a)') dir(1:length), '/counts-', rank, '.json'
    open (newunit=unit, file=trim(path), status='replace', action='write', iostat=io)
    if (io /= 0) then
      write (0, '(a,a)') 'app_counts: cannot write ', trim(path)
      status = 1
      return
    end if
    write (unit, '(a)', advance='no') '{'
    do i = 1, used
      if (i > 1) write (unit, '(a)', advance='no') ','
      write (unit, '(/,a,a,a,i0)', advance='no') '  "', trim(sorted(i)), '": ', sorted_counts(i)
    end do
    write (unit, '(/,a)') '}'
    close (unit)
  end subroutine write_counts

  ! Command-line argument `index` as an integer >= minimum, or `fallback` when absent.
  integer function read_arg(index, what, fallback, minimum) result(value)
    integer, intent(in) :: index, fallback, minimum
    character(len=*), intent(in) :: what
    character(len=64) :: text
    integer :: io
    value = fallback
    if (command_argument_count() < index) return
    call get_command_argument(index, text)
    read (text, *, iostat=io) value
    if (io /= 0 .or. value < minimum) then
      write (0, '(a,i0,a,a,a,i0,a,a,a)') 'fhalo: argument ', index, ' (', what, &
        ') must be an integer >= ', minimum, ", got '", trim(text), "'"
      stop 2
    end if
  end function read_arg

end module app_counts

program fhalo
  use mpi
  use app_counts
  implicit none

  integer, parameter :: tag_rightward = 70, tag_leftward = 71
  integer :: iterations, cells, work, interval
  integer :: rank, size, left, right, ierr, it, i, k, status
  integer :: requests(4)
  double precision, allocatable :: u(:), next(:)
  double precision :: average, v, residual, global_residual, local_sum, checksum
  character(len=32) :: residual_text, checksum_text
  character(len=16) :: first

  if (command_argument_count() >= 1) then
    call get_command_argument(1, first)
    if (first == '-h' .or. first == '--help') then
      write (*, '(a)') 'usage: app_fhalo [iterations (default 50)] &
        &[cells per rank (default 20000)] [work per cell (default 8)] &
        &[residual interval (default 10)]'
      stop
    end if
  end if
  iterations = read_arg(1, 'iterations', 50, 1)
  cells = read_arg(2, 'cells per rank', 20000, 1)
  work = read_arg(3, 'work per cell', 8, 1)
  interval = read_arg(4, 'residual interval', 10, 1)

  call count_call('MPI_Init')
  call MPI_INIT(ierr)
  call count_call('MPI_Comm_rank')
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call count_call('MPI_Comm_size')
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  left = rank - 1
  right = rank + 1
  if (rank == 0) left = MPI_PROC_NULL
  if (rank == size - 1) right = MPI_PROC_NULL

  ! cells 1..cells are owned, 0 and cells+1 are ghosts; the rod's left end is held at 1
  allocate (u(0:cells + 1), next(0:cells + 1))
  u = 0d0
  do i = 1, cells
    u(i) = dble(mod(rank * cells + i, 19)) / 19d0
  end do
  if (left == MPI_PROC_NULL) u(0) = 1d0
  next = u
  global_residual = 0d0

  do it = 1, iterations
    call count_call('MPI_Irecv')
    call MPI_IRECV(u(0), 1, MPI_DOUBLE_PRECISION, left, tag_rightward, MPI_COMM_WORLD, &
                   requests(1), ierr)
    call count_call('MPI_Irecv')
    call MPI_IRECV(u(cells + 1), 1, MPI_DOUBLE_PRECISION, right, tag_leftward, MPI_COMM_WORLD, &
                   requests(2), ierr)
    call count_call('MPI_Isend')
    call MPI_ISEND(u(cells), 1, MPI_DOUBLE_PRECISION, right, tag_rightward, MPI_COMM_WORLD, &
                   requests(3), ierr)
    call count_call('MPI_Isend')
    call MPI_ISEND(u(1), 1, MPI_DOUBLE_PRECISION, left, tag_leftward, MPI_COMM_WORLD, &
                   requests(4), ierr)
    call count_call('MPI_Waitall')
    call MPI_WAITALL(4, requests, MPI_STATUSES_IGNORE, ierr)

    residual = 0d0
    do i = 1, cells
      average = 0.5d0 * (u(i - 1) + u(i + 1))
      v = u(i)
      do k = 1, work
        v = v + 0.5d0 * (average - v)
      end do
      next(i) = v
      residual = residual + (v - u(i))**2
    end do
    u(1:cells) = next(1:cells)

    if (mod(it, interval) == 0) then
      call count_call('MPI_Allreduce')
      call MPI_ALLREDUCE(residual, global_residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                         MPI_COMM_WORLD, ierr)
    end if
  end do

  local_sum = sum(u(1:cells))
  call count_call('MPI_Reduce')
  call MPI_REDUCE(local_sum, checksum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (residual_text, '(es13.6)') global_residual
    write (checksum_text, '(es20.12)') checksum
    write (*, '(a,i0,a,i0,a,i0,a,i0,a,a,a,a)') 'fhalo: ', size, ' ranks, ', iterations, &
      ' iterations, ', cells, ' cells/rank, work ', work, ', residual ', &
      trim(adjustl(residual_text)), ', checksum ', trim(adjustl(checksum_text))
  end if
  deallocate (u, next)

  call count_call('MPI_Finalize')
  call write_counts(rank, status)
  call MPI_FINALIZE(ierr)
  if (status /= 0) stop 1
end program fhalo
